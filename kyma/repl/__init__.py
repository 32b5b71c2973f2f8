"""``kyma sql``: a psql-style terminal for kyma, over HTTP or on the embedded runtime.

``client/`` talks to kyma, ``render`` draws results, ``commands`` runs backslash commands,
``session`` runs input, ``shell`` is the interactive loop.
"""
