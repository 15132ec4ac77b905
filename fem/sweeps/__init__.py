"""The parts of :func:`fem.sweep`: the variants of a sweep and the ``--vary`` options
(:mod:`fem.sweeps.values`), the run of one variant and its row (:mod:`fem.sweeps.worker`),
the table files (:mod:`fem.sweeps.table`) and where the variants run
(:mod:`fem.sweeps.execution`)."""
