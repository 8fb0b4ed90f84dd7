"""
`bench/upstream_corpus.py` on a corpus of three chunks: one both tools
accept, one both reject, one only the pipeline cannot take (a dynamic shape);
the chunks' lines, the verdicts and the `--split-input-file` check.
"""

from pathlib import Path

from upstream_corpus import agreement, run_corpus, split_chunks, table

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


def test_verdicts(tmp_path: Path) -> None:
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
    assert "| total | 3 | 1 | 1 | 1 | 0 | 0 |" in table(verdicts, summaries)
