"""The review web app started by `hvbench review` (annotation queue, blind review, adjudication, agreement)."""
