"""The reproduction report: our points judged against the published ones, each claim of the
paper judged by a rule, and REPRODUCTION.md written from the committed CSVs alone.

- `fidelity`: two-sided verdicts (reproduced / better / worse) over a band of seeds;
- `claims`: one rule per claim of the paper, with its thresholds beside it;
- `runs`: the published runs read, and whether today's config and data would make them again;
- `sections`: one module per kind of section; `text`: the fixed prose; `markdown`: cells and tables;
- `tables`: the numbers behind the figures as Markdown tables;
- `render`: REPRODUCTION.md and the generated blocks of README.md and docs/ (`blocks`), put together
  and checked (`rbrepro report`).
"""
