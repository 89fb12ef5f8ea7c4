"""Reading the forum vote thread (votes.channel=forum-auto): reader, ledger, verdicts."""
