"""The run folder and everything on disk about a run: layout, lock, pool, validation samples, records, repair.

Every layer above reads and writes a run through here, so a file's name and format have
one owner.
"""
