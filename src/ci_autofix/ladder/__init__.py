"""The fix ladder every flow shares (`run.run_ladder`): fixers, then the agent, then verification
on clean trees and the patch policy, in a work area of its own; it ends in a `Proposal` or a halt."""
