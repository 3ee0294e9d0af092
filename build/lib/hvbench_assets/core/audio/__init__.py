"""Audio labels (L6, L8, L9, L10): one cached 16 kHz decode per clip shared by VAD, tagging,
ASR, speech emotion and voice demographics; every model behind a Protocol with a full
(paper) and an offline (bundled models / signal processing) implementation."""
