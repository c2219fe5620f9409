"""The commitments register: who promised what, by when, and whether memory shows it landed."""
