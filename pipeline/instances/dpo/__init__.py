"""DPO pairs from real verifier responses: sampling, Aletheia's pairing, ours."""
