"""The optimizer step: a backward micro-step, its candidates, consolidation, provenance and evidence."""
