"""The flows, each read top to bottom: propose and apply (the Action), local (the `fix` command).

A flow takes an event or a checkout, runs the stages (triage, ladder, deliver, state) and ends in one `Outcome`."""
