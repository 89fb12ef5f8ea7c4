"""What the rulesets share and the engine does not know: the witch's deadline and 通灵, the
options every ruleset here accepts beyond the engine's, the hunter's deadline kind."""
