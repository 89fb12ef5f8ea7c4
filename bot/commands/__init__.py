"""The chat command vocabulary: one table (vocabulary.yaml) for parsing chat text, converting
it to engine commands, help texts and the scenario runner's verbs."""
