"""Running hvbench on several machines: Ray placement of runs (GPU requests) and the local try-out cluster."""
