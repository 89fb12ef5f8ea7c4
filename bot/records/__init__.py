"""A community's memory (issue 31, docs/records.md): players' records, seasons, leaderboards
and the boards' real win rates beside the simulator's, from the signed logs of finished games."""
