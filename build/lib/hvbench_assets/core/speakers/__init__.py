"""L7 active speakers: per-frame speaking scores for each face track (Light-ASD in torch, or
mouth-motion / voice correlation offline), the longest-positive-run rule and the demographics veto."""
