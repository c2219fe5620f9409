"""The contradictions register: what the organisation believes twice, differently."""
