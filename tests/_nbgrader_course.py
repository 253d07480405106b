"""A real nbgrader round trip on every chapter, built once per test session (tests/grading/test_nbgrader.py reads it).

``course()`` writes the student edition and the nbgrader course with tools/make_student.py, runs
``nbgrader generate_assignment`` and then ``nbgrader autograde`` on the release as a student receives
it: ``untouched``, or, in a chapter with an exercise asking for something posenc_lib computes,
``library``: the release with each such exercise answered by a call of that library code and every
other exercise left as its stub. Either must score 0 autograded points. (The stubs of those few
exercises are shown to fail by the checkers' unit tests, and the guard that switches the library off is
shown to restore it.)

``grade_solutions()`` then autogrades the ``solutions``: the source notebook, with the solutions. Where
`make test-nbval` ran the chapter, it also ran the chapter's locked test cells, each right after
its answer (tests/nbval_record.py), so that run is a run of the source notebook: nbgrader grades its
outputs as they are (``--Execute.enabled=False``) instead of executing the chapter a second time.
Otherwise nbgrader executes the solutions itself. Beside them, a ``broken`` copy of one chapter's
graded notebook, with one test cell's output replaced by an error, shows that such grading can fail.

So each chapter's release runs once (here) and its source once (nbval's run, or here). The chapters
are split over two course folders (each with its own gradebook) graded side by side, so the round
trip uses both cores of the machine ``make test`` runs on.
"""

from __future__ import annotations

import atexit
import copy
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import nbformat

import make_student as ms
from book_files import ROOT

NBGRADER = pathlib.Path(sys.executable).parent / "nbgrader"
STUDENTS = ("untouched", "library", "solutions")
BROKEN = "broken"  # a solutions notebook with one test cell's output an error (grade_solutions)

# the function an exercise asks for -> a body computing the same with the posenc_lib code it must not call;
# tests/grading/test_nbgrader.py checks that each is a right answer when the checkers' guard is off
LIBRARY_ANSWERS = {
    "table_symmetries": """from posenc_lib.exercises.why_order_matters import reference_symmetries
return reference_symmetries(table)""",
    "my_next_row": "return pe.shift_matrix(1, len(row)).numpy() @ row",
    "add_positions": """real = [w for w in words if w != "<pad>"]
out = torch.zeros(len(words), d_model)
if real:
    rows = pe.SinusoidalPositionalEncoding(d_model)(pe.embed_words(real, d_model), offset=first)
    out[torch.tensor([w != "<pad>" for w in words])] = rows
return out""",
    "my_shift_matrix": """order = pe.interleaved_to_concatenated_permutation(d_model)
return pe.shift_matrix(delta, d_model)[order][:, order]  # the concatenated layout's M_delta""",
    "updates_per_row": """module = pe.LearnedPositionalEmbedding(d_model=1, max_len=max_len)
sum(module(torch.zeros(1, n, 1)).sum() for n in lengths.tolist()).backward()
return module.weight.grad[:, 0]  # row p's gradient: the sequences that look it up""",
    "my_offset_scores": """keys = k[..., None, :].expand(*k.shape[:-1], len(offsets), k.shape[-1])  # (..., n, d_h)
return (q[..., None, :] * pe.apply_rope(keys, offsets, base=base)).sum(-1)  # the key at r, the query at 0""",
    "my_offset_scores_interleaved": """keys = k[..., None, :].expand(*k.shape[:-1], len(offsets), k.shape[-1])  # (..., n, d_h)
return (q[..., None, :] * pe.apply_rope(keys, offsets, base=base, layout="interleaved")).sum(-1)""",
    "my_alibi_slopes": "return pe.alibi_slopes(n_heads)",
    "my_ntk_frequencies": "return pe.ntk_aware_frequencies(pe.rope_frequencies(head_dim, base), factor)",
    "bucket_starts": """per = num_buckets // 2 if bidirectional else num_buckets
t = torch.arange(4 * max_distance + per)
b = pe.t5_relative_position_bucket(-t, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
return [int(t[b == k][0]) if (b == k).any() else None for k in range(per)]""",
    # (at exactly 1 or 4 turns the blend equals theta / 8 or theta, so the library's output cannot tell the groups there)
    "llama3_groups": """new = pe.llama3_frequencies(frequencies, original_max_len=original_len)
turns = pe.rotations(frequencies, original_len)
unchanged, divided = int((new == frequencies)[turns != 4].sum()), int((new < frequencies)[turns < 1].sum())
return unchanged, len(frequencies) - unchanged - divided, divided""",
    "interpolate": """stretched = copy.deepcopy(model)
frequencies = pe.linear_scaling_frequencies(pe.rope_frequencies(model.config.head_dim), factor)
stretched.rope = pe.RotaryEmbedding(model.config.head_dim, frequencies=frequencies)
return stretched""",
}
TEST_ID = re.compile(r"-test(-\d+)?$")  # make_student's ids: <label>-test(-N) for tests, <label>-answer(-N)
SOLUTION_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION\n.*?^[ \t]*### END SOLUTION\n?", re.MULTILINE | re.DOTALL
)


def library_answer(source: str) -> str | None:
    """``source`` (a solution cell) with its function's body replaced by a library call, or None if there is none."""
    defined = re.search(r"^def (\w+)\(", source, flags=re.MULTILINE)
    if not defined or defined[1] not in LIBRARY_ANSWERS or not SOLUTION_BLOCK.search(source):
        return None
    body = LIBRARY_ANSWERS[defined[1]]
    return SOLUTION_BLOCK.sub(lambda m: "".join(f"{m['indent']}{line}\n" for line in body.split("\n")), source, count=1)


@dataclass
class Grade:
    exercise: str  # the exercise label the grade cell belongs to
    test: bool  # an autograder test (else a manually graded answer)
    score: float | None  # None: waits for manual grading
    max_score: float


@dataclass
class Course:
    root: pathlib.Path  # holds student/ and the course folders
    chapters: list  # make_student's models
    grades: dict[tuple[str, str], list[Grade]]  # (assignment, student) -> grades
    cheated: dict[str, list[str]]  # assignment -> labels of the exercises answered with a library call
    seconds: float  # wall time of generate_assignment + autograde
    folders: list[pathlib.Path]  # the course folders
    groups: list[list]  # the chapters of each folder
    env: dict[str, str]  # the environment the nbgrader commands run in
    from_nbval: list[str] = field(default_factory=list)  # chapters whose solutions were graded from nbval's run
    broken: str | None = None  # the chapter of the BROKEN submission

    def autograded(self, chapter: str, student: str) -> tuple[float, float]:
        tests = [g for g in self.grades[chapter, student] if g.test]
        return sum(g.score or 0 for g in tests), sum(g.max_score for g in tests)

    def released(self, chapter: str) -> str:
        """The submission made from the chapter's release: ``library`` where some answers call posenc_lib."""
        return "library" if chapter in self.cheated else "untouched"

    def executed(self, chapter: str, student: str) -> nbformat.NotebookNode:
        """The notebook nbgrader ran for a submission (its outputs are those of the run)."""
        folder = next(p for p in self.root.glob(f"course*/autograded/{student}/{chapter}"))
        return nbformat.read(folder / f"{chapter}.ipynb", as_version=4)

    def release(self, chapter: str) -> nbformat.NotebookNode:
        folder = next(p for p in self.root.glob(f"course*/release/{chapter}"))
        return nbformat.read(folder / f"{chapter}.ipynb", as_version=4)


def _submit(course: pathlib.Path, chapter, cheated: dict[str, list[str]]) -> None:
    """The release's submission (the solutions are submitted by grade_solutions)."""
    stem = chapter.path.stem
    source = nbformat.read(course / "source" / stem / chapter.path.name, as_version=4)
    answers = {
        cell.metadata["nbgrader"]["grade_id"]: changed
        for cell in source.cells
        if cell.cell_type == "code" and (changed := library_answer(cell.source)) is not None
    }
    student = "library" if answers else "untouched"
    shutil.copytree(course / "release" / stem, course / "submitted" / student / stem)
    if not answers:
        return
    cheated[stem] = [grade_id.rsplit("-answer", 1)[0] for grade_id in answers]
    release = nbformat.read(course / "release" / stem / chapter.path.name, as_version=4)
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers.pop(grade_id)
            assert "### BEGIN SOLUTION" not in cell.source, cell.source  # the library call is the whole answer
    assert not answers, f"{stem}: no released answer cell for {sorted(answers)}"
    nbformat.write(release, course / "submitted" / "library" / stem / chapter.path.name)


def is_test_cell(cell: nbformat.NotebookNode) -> bool:
    """A locked autograder test cell of the nbgrader source (make_student writes one per checker call)."""
    grading = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(grading.get("grade")) and not grading.get("solution")


def autograder_tests(chapter) -> list[tuple[int, nbformat.NotebookNode]]:
    """The test cells of a chapter's nbgrader source, each with the index of the book notebook's code cell it
    follows (its answer): nbval runs them there, in the chapter's kernel, as nbgrader would."""
    book = nbformat.read(chapter.path, as_version=4)
    book_code = iter(index for index, cell in enumerate(book.cells) if cell.cell_type == "code")
    found: list[tuple[int, nbformat.NotebookNode]] = []
    last = -1
    for cell in chapter.source.cells:
        if is_test_cell(cell):
            found.append((last, cell))
        elif cell.cell_type == "code":  # every other code cell of the source is the book's next one
            last = next(book_code)
            assert book.cells[last].source == cell.source, f"{chapter.path.name}: cell {last} differs in the source"
    return found


def solutions_notebook(chapter, executed: nbformat.NotebookNode, tests: dict[str, list]) -> nbformat.NotebookNode:
    """The nbgrader source notebook with the outputs of a run: ``executed`` is the book notebook with that
    run's outputs, ``tests`` the outputs of the test cells run after each answer, by grade id."""
    notebook = copy.deepcopy(chapter.source)
    book_code = iter(cell for cell in executed.cells if cell.cell_type == "code")
    for cell in notebook.cells:
        if is_test_cell(cell):
            cell.outputs = copy.deepcopy(tests[cell.metadata["nbgrader"]["grade_id"]])
        elif cell.cell_type == "code":
            ran = next(book_code)
            assert ran.source == cell.source, (
                f"{chapter.path.name}: nbval's run in test-artifacts/executed is of an older version of the "
                "notebook: run `make test-nbval` again"
            )
            cell.outputs = copy.deepcopy(ran.outputs)
    return notebook


def grade_solutions(course: Course, runs: dict[str, tuple[nbformat.NotebookNode, dict[str, list]]]) -> None:
    """Autograde the solutions of every chapter (see the module's docstring). ``runs``: chapter stem -> (the
    book notebook with the outputs of nbval's run, the outputs of the test cells nbval ran; tests/nbval_record.py).
    A course folder whose chapters all have a run is graded without executing anything; any other
    folder's solutions are executed by nbgrader."""
    start = time.perf_counter()
    commands = []
    for folder, group in zip(course.folders, course.groups):
        stored = all(chapter.path.stem in runs for chapter in group)
        for chapter in group:
            stem = chapter.path.stem
            submission = folder / "submitted" / "solutions" / stem
            shutil.copytree(folder / "source" / stem, submission)
            if not stored:
                continue
            notebook = solutions_notebook(chapter, *runs[stem])
            nbformat.write(notebook, submission / chapter.path.name)
            course.from_nbval.append(stem)
            if course.broken is None:  # one test cell fails: its output is an error, as a failed assert leaves it
                test = next(cell for cell in notebook.cells if is_test_cell(cell))
                test.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="", traceback=[])]
                shutil.copytree(folder / "source" / stem, folder / "submitted" / BROKEN / stem)
                nbformat.write(notebook, folder / "submitted" / BROKEN / stem / chapter.path.name)
                course.broken = stem
        command = [str(NBGRADER), "autograde", "*", "--create", "--student", "solutions"]
        if stored:  # the outputs are those of nbval's run (and BROKEN's): grade them, do not execute again
            command[-1] = "*"
            command += ["--CourseDirectory.student_id_exclude=untouched,library", "--Execute.enabled=False"]
        commands.append((folder, command))
    _run_all(commands, course.env)
    course.seconds += time.perf_counter() - start
    for folder in course.folders:
        course.grades.update(_grades(folder))


def _grades(course: pathlib.Path) -> dict[tuple[str, str], list[Grade]]:
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
                found[assignment.name, submission.student.id] = [
                    # a test cell's id ends in -test (-N); a label may hold "-test" too (ex-why-permutation-test)
                    Grade(
                        re.sub(r"-(test|answer)(-\d+)?$", "", g.name),
                        bool(TEST_ID.search(g.name)),
                        g.score,
                        g.max_score,
                    )
                    for g in grades
                ]
    return found


def _run_all(commands: list[tuple[pathlib.Path, list[str]]], env: dict[str, str]) -> None:
    """Run one command per course folder, side by side; fail with its log if one fails."""
    processes = [
        (
            subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True),
            command,
        )
        for folder, command in commands
    ]
    for process, command in processes:
        log, _ = process.communicate(timeout=1800)
        assert process.returncode == 0, f"{' '.join(command)} failed:\n{log[-5000:]}"


def course(environment: dict[str, str] | None = None) -> Course:
    """The round trip; the commands run in ``environment`` (default: this process's), plus the settings below."""
    root = pathlib.Path(tempfile.mkdtemp(prefix="posenc-nbgrader-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    chapters = ms.make_student_edition(ROOT, root / "student", nbgrader=root / "all")
    groups: list[list] = [[], []]  # two course folders with about the same number of cells to run
    for chapter in sorted(chapters, key=lambda c: -len(c.source.cells)):
        min(groups, key=lambda g: sum(len(c.source.cells) for c in g)).append(chapter)
    folders = [root / f"course{number}" for number in range(len(groups))]
    for folder, group in zip(folders, groups):
        folder.mkdir()
        shutil.copy2(root / "all" / "nbgrader_config.py", folder / "nbgrader_config.py")
        for chapter in group:
            shutil.copytree(root / "all" / "source" / chapter.path.stem, folder / "source" / chapter.path.stem)
    base = dict(os.environ if environment is None else environment)
    env = dict(
        base,
        PATH=f"{NBGRADER.parent}{os.pathsep}{base.get('PATH', '')}",
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join([str(ROOT), base.get("PYTHONPATH", "")]),
    )
    start = time.perf_counter()
    _run_all([(folder, [str(NBGRADER), "generate_assignment", "*", "--force"]) for folder in folders], env)
    cheated: dict[str, list[str]] = {}
    for folder, group in zip(folders, groups):
        for chapter in group:
            _submit(folder, chapter, cheated)
    _run_all([(folder, [str(NBGRADER), "autograde", "*", "--create"]) for folder in folders], env)
    seconds = time.perf_counter() - start
    grades = {key: value for folder in folders for key, value in _grades(folder).items()}
    return Course(root, chapters, grades, cheated, seconds, folders, groups, env)
