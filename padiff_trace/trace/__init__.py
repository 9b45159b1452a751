"""The trace format: writing, reading, checking and archiving HDF5 traces.

Its public face is the package itself (``padiff_trace.Trace``, ``padiff_trace.TraceWriter``,
``padiff_trace.open_trace`` …, loaded on first use); the recorder and the analyzer import from
there, never from the modules here. Reading order:

* the format: ``_schema`` (kinds, phases, the record table), ``_header`` (what a producer
  says about a record), ``_payloads`` (deferred tensors, summaries, writer options), ``_meta``;
* writing: ``_writer`` (producers enqueue, one thread writes) → ``_encode`` (one record → one
  row) → ``_shardwriter`` (one shard file, under ``.part``, renamed when whole);
* reading: ``_open`` (finding shards) → ``_shardindex`` (a shard's record table) →
  ``_reader`` (``Trace``) and ``_record`` (``Record``) → ``_shardreader`` / ``_readbuf``
  (tensor bytes) and ``_statsread`` (statistics on demand);
* trusting what was read: ``_closed`` (a shard is a closed world), ``_integrity``
  (checksums), ``_merge`` (salvage), ``_verify`` (damage list, health);
* around a trace: ``_tracedir`` (the files of a trace directory), ``_catalog`` (traces
  archived under a directory), ``_visible`` (trace strings made safe to show).
"""
