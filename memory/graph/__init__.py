"""The temporal graph: entities, facts, values, supersession, extraction and reads."""
