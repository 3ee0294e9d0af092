from hvbench_assets.core.ingest.batches import clip_batches


def test_short_pending_clips_that_follow_each_other_share_a_run():
    order = ["a0", "a1", "a2", "b0", "b1", "c0", "c1", "c2", "c3", "c4"]
    pending = {"a0": 3.0, "a1": 4.0, "a2": 30.0, "b0": 2.0, "b1": 5.0, "c1": 6.0, "c2": 2.5, "c3": 3.5, "c4": 4.5}
    # a2 is long (alone, and it ends a0-a1's batch); c0 is not pending (labelled already): it ends b0-b1's
    assert clip_batches(order, pending, max_clips=8, short_s=8.0) == [
        ["a0", "a1"], ["a2"], ["b0", "b1"], ["c1", "c2", "c3", "c4"]]
    assert clip_batches(order, pending, max_clips=3, short_s=8.0)[-2:] == [["c1", "c2", "c3"], ["c4"]]
    # batches of one clip: every clip alone, as before
    assert clip_batches(order, pending, max_clips=1, short_s=8.0) == [[k] for k in order if k in pending]
    assert clip_batches(order, {}, max_clips=8, short_s=8.0) == []
