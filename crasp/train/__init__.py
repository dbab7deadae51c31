"""Training causal transformers on counting languages."""
