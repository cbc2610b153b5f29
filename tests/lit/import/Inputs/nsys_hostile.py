"""Nsight Systems exports pipec must refuse, each with a clear error, and one
of the older schema it must read: nsys_hostile.py FOLDER (holding the
nsys.sqlite two_forms.py wrote; the files are written beside it)."""
import os
import shutil
import sqlite3
import sys

folder = sys.argv[1]
good = os.path.join(folder, "nsys.sqlite")


def fresh(name, sql="", copy=False):
    path = os.path.join(folder, name)
    if os.path.exists(path):
        os.remove(path)
    if copy:
        shutil.copy(good, path)
    db = sqlite3.connect(path)
    db.executescript(sql)
    db.commit()
    db.close()
    return path


# An SQLite database that is no export.
fresh("foreign.sqlite", "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
# A schema of a major version pipec does not know.
fresh("v9.sqlite", "UPDATE META_DATA_EXPORT SET value = '9.0.1' "
      "WHERE name = 'EXPORT_SCHEMA_VERSION';", copy=True)
# No kernel table: what ran is not known.
fresh("no-kernels.sqlite", "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;", copy=True)
# The kernel table is a view (it runs what its author wrote).
fresh("view.sqlite", "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; "
      "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY;",
      copy=True)
# Tables there, empty: nothing recorded on the GPU.
fresh("empty.sqlite", "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; "
      "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;", copy=True)
# A kernel table of a schema without a column pipec reads.
fresh("no-column.sqlite", "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL "
      "DROP COLUMN registersPerThread;", copy=True)
# A kernel whose end is before its start.
fresh("backwards.sqlite", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 "
      "WHERE rowid = 1;", copy=True)
# A grid past CUDA's limit.
fresh("huge-grid.sqlite", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridY = 65536, "
      "gridZ = 65536 WHERE rowid = 2;", copy=True)
# The schema of exports before 3.0: EXPORT_META_DATA, version 2.9.1.
fresh("older.sqlite", "ALTER TABLE META_DATA_EXPORT RENAME TO EXPORT_META_DATA; "
      "UPDATE EXPORT_META_DATA SET value = '2.9.1' WHERE name = 'EXPORT_SCHEMA_VERSION';",
      copy=True)
# No CUDA event table: the stream waits' events are not known.
fresh("no-events.sqlite", "DROP TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT;", copy=True)
# The file cut short after its first pages.
with open(good, "rb") as f:
    head = f.read(8192)
with open(os.path.join(folder, "truncated.sqlite"), "wb") as f:
    f.write(head)
# Stream priorities (TARGET_INFO_CUDA_STREAM, stored as CUDA's int read back
# unsigned): stream 8 at -5, stream 9 at -9 (past the device's range), of
# the process that ran the ops; another process's stream 7 at -5.
fresh("priorities.sqlite", "CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, "
      "hwId INTEGER NOT NULL, vmId INTEGER NOT NULL, processId INTEGER NOT NULL, "
      "contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag INTEGER NOT NULL); "
      "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (8, 0, 1, 5, 1, 4294967291, 2); "
      "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (9, 0, 1, 5, 1, 4294967287, 2); "
      "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (7, 0, 1, 6, 1, 4294967291, 2); "
      "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (7, 0, 1, 5, 1, 0, 3);", copy=True)
