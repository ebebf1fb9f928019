"""The curator's queues: near-duplicate pairs waiting for a decision."""
