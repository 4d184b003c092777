"""The reproduction report: our points judged against the published ones, each claim of the
paper judged by a rule, and REPRODUCTION.md written from the committed CSVs alone.

- `fidelity`: two-sided verdicts (reproduced / better / worse) over a band of seeds;
- `claims`: one rule per claim of the paper, with its thresholds beside it;
- `render`: the Markdown of REPRODUCTION.md (`rbrepro report`).
"""
