"""`hvbench demo`: the main job on the embedded defaults, end to end, without the UI.

main.py runs the per-clip jobs on the sample clips (or --videos DIR) and prints what the warehouse holds;
benchmark.py carries on to curation, the benchmark export and its evaluation; samples.py makes the sample
clips from photographs that ship inside scikit-image.
"""
