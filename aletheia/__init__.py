"""The `aletheia` command line: the app shell (aletheia/cli.py) over the pipeline's stages
and flows. `python -m aletheia` runs it as the console script does."""
