"""`python -m aletheia`: the console script, run as a module (e.g. by `accelerate launch -m`)."""

from aletheia.cli import main

if __name__ == "__main__":
    main()
