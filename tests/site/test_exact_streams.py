from course_site import concatenate_stream_chunks, join_stream_chunks


def stream(name, text):
    return {"output_type": "stream", "name": name, "text": text}


def test_a_line_split_across_chunks_is_joined_verbatim():
    outputs = [stream("stdout", "distance: 1."), stream("stdout", "25\n\nnext line\n")]
    assert concatenate_stream_chunks(outputs) == [stream("stdout", "distance: 1.25\n\nnext line\n")]


def test_streams_keep_their_first_position_and_other_outputs_stay():
    figure = {"output_type": "display_data", "data": {"text/plain": "<Figure>"}, "metadata": {}}
    outputs = [stream("stdout", "a"), figure, stream("stderr", "warn\n"), stream("stdout", "b\n")]
    merged = concatenate_stream_chunks(outputs)
    assert merged == [stream("stdout", "ab\n"), figure, stream("stderr", "warn\n")]
    assert outputs[0]["text"] == "a", "the input outputs must not be modified"


def test_the_sphinx_hook_wraps_myst_nb_merge():
    from myst_nb.core import render

    join_stream_chunks()
    merged = render.coalesce_streams([stream("stdout", "x = 1."), stream("stdout", "5\n")])
    assert [o["text"] for o in merged] == ["x = 1.5\n"]
