"""The bot: transport, commands, rendering, persistence, scheduler and CLI around the engine."""
