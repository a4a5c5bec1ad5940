"""One module per experiment; each registers itself with harness.experiment."""
