import dagster as dg

from hvbench_assets.defs.sensor_state import KEEP, load_state, read_state, save_state


def test_the_cursor_is_a_short_token_and_the_last_states_stay_readable():
    big = {"files": {f"folder/video {i:04d}.mp4": {"fp": f"{i}-1", "picked": f"{i}-1", "key": f"video_{i}"}
                     for i in range(500)}}
    with dg.instance_for_test() as instance:
        tokens = []
        for i in range(KEEP + 2):
            ctx = dg.build_sensor_context(instance=instance, cursor=tokens[-1] if tokens else None)
            tokens.append(save_state(ctx, "inbox_sensor", {**big, "tick": i}))
        assert all(len(t) == 16 for t in tokens)
        # the newest KEEP are kept (a tick that failed after saving leaves its predecessor's state readable)
        assert [read_state(instance, "inbox_sensor", t, {}).get("tick") for t in tokens] == [None, None, 2, 3, 4, 5]
        assert load_state(dg.build_sensor_context(instance=instance, cursor=tokens[-1]), "inbox_sensor", {}) == {**big, "tick": 5}
        # an unchanged state keeps its token; a reset cursor reads as no state; sensors do not share states
        assert save_state(dg.build_sensor_context(instance=instance, cursor=tokens[-1]), "inbox_sensor", {**big, "tick": 5}) == tokens[-1]
        assert load_state(dg.build_sensor_context(instance=instance), "inbox_sensor", "none") == "none"
        assert read_state(instance, "clip_sensor", tokens[-1], "none") == "none"
        # a JSON cursor of an instance written before the states moved out is still read
        assert load_state(dg.build_sensor_context(instance=instance, cursor='{"files": {}}'), "inbox_sensor", None) == {"files": {}}
