"""Small example kernels of the TLE language (read by the frontend tests; see each file)."""
