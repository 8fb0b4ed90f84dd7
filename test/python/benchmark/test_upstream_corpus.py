"""
`bench/upstream_corpus.py` on a corpus of three chunks: one both tools
accept, one both reject, one only the pipeline cannot take (a dynamic shape);
the chunks' lines, the verdicts and the `--split-input-file` check; and on a
file with a chunk `mlir-opt` aborts on (an assertion of its build), which is
found, marked, and held to a located rejection, the chunks after it judged.
"""

from pathlib import Path

import pytest
import upstream_corpus
from upstream_corpus import (
    BEGIN,
    END,
    agreement,
    false_accepts,
    run_corpus,
    split_chunks,
    summary,
    table,
    upstream_verdicts,
    write_docs,
)

CORPUS = """\
// a header
func.func @ok(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @bad(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----
func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %r = arith.addf %a, %a : tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    (corpus / "Dialect").mkdir(parents=True)
    (corpus / "Dialect" / "three.mlir").write_text(CORPUS)
    return corpus


def test_chunks_keep_their_lines(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    chunks = split_chunks(corpus / "Dialect" / "three.mlir", corpus)
    # each from the line after its `// -----` to the next one (or the end)
    assert [(c.first_line, c.last_line) for c in chunks] == [(1, 7), (8, 14), (15, 19)]
    lines = CORPUS.splitlines()
    assert lines[8 - 1] == ""
    assert lines[15 - 1].startswith("func.func @dynamic")
    assert chunks[2].text.startswith("func.func @dynamic")
    assert chunks[1].where == "Dialect/three.mlir:8"


def test_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verdicts, summaries = run_corpus(_corpus(tmp_path))
    assert [v.outcome for v in verdicts] == [
        "agree-accept",
        "agree-reject",
        "unsupported",
    ]
    assert "three.mlir:10:23: error:" in verdicts[1].message
    assert "dynamic shapes are not supported" in verdicts[2].message
    assert verdicts[2].stage == "pipeline"
    assert all(v.reported for v in verdicts)
    assert agreement(verdicts) == 1.0
    # the rejected chunk carries no expected-error: marked, held to upstream
    assert [v.marked for v in verdicts] == [
        "",
        "mlir-opt rejects it (the file expects none)",
        "",
    ]
    assert false_accepts(verdicts) == []
    assert "| total | 3 | 1 | 1 | 1 | 0 | 0 | 1 |" in table(verdicts, summaries)
    assert summary(verdicts) == (
        '3 chunks of 1 files: 3 agree (1 both accept, 1 both reject, 1 a located "not '
        'supported"), 0 disagree, 0 unreported by `--split-input-file`. False '
        "accepts: 0 of the 1 chunks upstream rejects (0 chunks of the `invalid.mlir` "
        "files, 0 of them rejected by upstream). Marked: 1 (mlir-opt rejects it "
        "(the file expects none): 1)."
    )
    page = tmp_path / "page.md"
    page.write_text(f"before\n{BEGIN}\nold\n{END}\nafter\n")
    monkeypatch.setattr(upstream_corpus, "DOCS", {"benchmarks": page})
    write_docs(verdicts, summaries)
    written = page.read_text()
    assert written.startswith(f"before\n{BEGIN}\n| file | chunks |")
    assert "\n`.venv/bin/python bench/upstream_corpus.py --write-docs`: 3" in written
    assert "| total | 3 | 1 | 1 | 1 | 0 | 0 | 1 |" in written
    assert written.endswith(f": 1).\n{END}\nafter\n")


ABORTS = """\
// RUN: mlir-opt %s -split-input-file -verify-diagnostics
func.func @fine(%a: i8) -> i8 {
  return %a : i8
}

// -----

func.func @switch_i8_unsigned_overflow(%flag: i8) {
  cf.switch %flag : i8, [
    default: ^bb1,
    // expected-error@+1 {{case value is out of range for 'i8'}}
    256: ^bb1
  ]
^bb1:
  return
}

// -----

func.func @undefined(%a: i8) -> i8 {
  // expected-error@+1 {{use of undeclared SSA value name}}
  return %b : i8
}

// -----

func.func @fine_too(%a: i8) -> i8 {
  return %a : i8
}
"""


def test_the_chunk_mlir_opt_aborts_on_is_found_and_marked(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "Dialect").mkdir(parents=True)
    path = corpus / "Dialect" / "invalid.mlir"
    path.write_text(ABORTS)
    chunks = split_chunks(path, corpus)
    upstream = upstream_verdicts(path, chunks)
    assert [u.verdict for u in upstream] == ["accept", "abort", "reject", "accept"]
    assert [u.marked(c) for c, u in zip(chunks, upstream, strict=True)] == [
        "",
        "mlir-opt aborts on it",
        "",
        "",
    ]
    assert upstream[2].message.startswith(":22:")
    verdicts, summaries = run_corpus(corpus)
    assert [v.outcome for v in verdicts] == [
        "agree-accept",
        "agree-reject",
        "agree-reject",
        "agree-accept",
    ]
    assert "invalid.mlir:9:3: error:" in verdicts[1].message
    assert "out of range" in verdicts[1].message
    assert "| total | 4 | 2 | 2 | 0 | 0 | 0 | 1 |" in table(verdicts, summaries)
