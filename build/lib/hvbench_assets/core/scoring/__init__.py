"""Scoring: option extraction (+ optional LLM judge), paper-style aggregation, random baselines,
item statistics, distractor frequencies, circular evaluation, Markdown/HTML reports."""
