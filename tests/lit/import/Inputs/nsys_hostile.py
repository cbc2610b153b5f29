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
# An export from a version that wrote no metadata table: every table pipec
# reads is there, so it is read.
fresh("no-metadata.sqlite", "DROP TABLE META_DATA_EXPORT;", copy=True)
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
# A column whose values are computed on every read (it could cost any
# time or memory): refused.
fresh("generated.sqlite", "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k0; "
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (s0 INTEGER NOT NULL, end INTEGER NOT NULL, "
      "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
      "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
      "shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, gridX INTEGER, "
      "gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, "
      "staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, graphNodeId INTEGER, "
      "start AS (s0 + 0)); "
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT start, end, deviceId, contextId, "
      "streamId, correlationId, globalPid, demangledName, shortName, registersPerThread, "
      "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
      "dynamicSharedMemory, graphNodeId FROM k0; DROP TABLE k0;", copy=True)
# No StringIds: no names, and no call's kind.
fresh("no-strings.sqlite", "DROP TABLE StringIds;", copy=True)
# Calls without their thread beside ops with their process.
fresh("no-thread.sqlite", "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL;", copy=True)
# A name with a terminal's escapes in SQLite's own message (a view made to
# read as a table: "malformed database schema (NAME)").
fresh("escape-message.sqlite", "CREATE VIEW \"v\x1b]0;owned\x07\" AS SELECT 1; "
      "PRAGMA writable_schema = ON; "
      "UPDATE sqlite_master SET type = 'table' WHERE type = 'view';", copy=True)
# Cut inside its last page (SQLite would read its last rows as NULLs).
with open(good, "rb") as f:
    whole = f.read()
with open(os.path.join(folder, "cut.sqlite"), "wb") as f:
    f.write(whole[:-1000])
# A header whose page size is 0, and one of 1000 bytes: no page SQLite
# writes (the file cannot be measured in them).
for name, size in (("page-zero.sqlite", 0), ("page-odd.sqlite", 1000)):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(whole[:16] + size.to_bytes(2, "big") + whole[18:])
# Changes in a write-ahead log not written back: the export alone is stale.
wal = os.path.join(folder, "wal")
os.makedirs(wal, exist_ok=True)
shutil.copy(good, os.path.join(wal, "w.sqlite"))
keep = sqlite3.connect(os.path.join(wal, "w.sqlite"))
keep.execute("PRAGMA journal_mode=WAL")
keep.execute("PRAGMA wal_autocheckpoint=0")
keep.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = end + 1000")
keep.commit()
shutil.copy(os.path.join(wal, "w.sqlite"), os.path.join(wal, "stale.sqlite"))
shutil.copy(os.path.join(wal, "w.sqlite-wal"), os.path.join(wal, "stale.sqlite-wal"))
keep.close()
# An unfinished transaction: a hot rollback journal beside the export (its
# header's magic; a committed one is deleted, truncated or zeroed).
hot = os.path.join(folder, "hot")
os.makedirs(hot, exist_ok=True)
shutil.copy(good, os.path.join(hot, "h.sqlite"))
with open(os.path.join(hot, "h.sqlite-journal"), "wb") as f:
    f.write(bytes([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]) + bytes(504))
shutil.copy(good, os.path.join(hot, "cold.sqlite"))
with open(os.path.join(hot, "cold.sqlite-journal"), "wb") as f:
    f.write(bytes(512))
# A range named with punctuation, as record_function names often are.
fresh("punctuated.sqlite", "UPDATE StringIds SET value = '## forward ##' "
      "WHERE value = 'iteration';", copy=True)
