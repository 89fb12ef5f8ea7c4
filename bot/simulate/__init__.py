"""`wolfjudge simulate`: whole games with automatic players, and their statistics.

driver.py plays the judge (clock, deadlines, who owes what; it reads the state), view.py is
what one seat may know (built from the events that reached it), agents.py the policies that
decide from a view only, stats.py the counting (rules fired, Wilson intervals), run.py the run
(jobs, report text), chart.py the PNG, markdown.py the tables of docs/balance.md; the Chinese
wording and the list of counted rules are in texts.yaml.
"""
