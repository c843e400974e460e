"""The flows, each read top to bottom: propose, review and apply (the Action), local (the `fix` command).

A flow takes an event or a checkout, builds its one context (`Attempt`, `Cycle`, apply's `Request`,
`LocalAttempt`), runs the stages (triage, ladder, deliver, state) as its steps over it, and ends in
one `Outcome`; a halt ends every Action flow the same way (`flows.ended`)."""
