#!/usr/bin/env sysbench
-- TPC-B-like workload for sysbench 1.0: pgbench's default ("tpcb-like") schema and
-- transaction, written for perftrack (article 003 compares MySQL releases with it).
--
-- Schema (pgbench, PostgreSQL docs "pgbench"): per scale unit 1 branch, 10 tellers and
-- --table-size accounts (pgbench: 100000); history starts empty.
-- Mapping to perftrack's cell: --tables = the scale factor (branches),
-- --table-size = accounts per branch. One event = one pgbench transaction:
--   BEGIN; UPDATE accounts; SELECT abalance; UPDATE tellers; UPDATE branches;
--   INSERT history; COMMIT
-- with aid, tid, bid uniform over their ranges and delta uniform in [-5000, 5000].

sysbench.cmdline.options = {
   tables = {"Scale factor: number of branches (pgbench -s)", 1},
   table_size = {"Accounts per branch (pgbench: 100000)", 100000},
   mysql_storage_engine = {"Storage engine of the tables", "innodb"},
}

-- pgbench's fixed shape: tellers per branch and the delta range (pgbench source,
-- "tpcb-like" builtin script: :delta random(-5000, 5000)).
local TELLERS_PER_BRANCH = 10
local DELTA = 5000

local function scale() return sysbench.opt.tables end
local function accounts() return sysbench.opt.tables * sysbench.opt.table_size end

local function engine_def()
   return "/*! ENGINE = " .. sysbench.opt.mysql_storage_engine .. " */"
end

local function load_rows(con, table, count, row)
   con:bulk_insert_init("INSERT INTO " .. table .. " VALUES")
   for i = 1, count do
      con:bulk_insert_next(row(i))
   end
   con:bulk_insert_done()
end

function prepare()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local e = engine_def()
   con:query("CREATE TABLE pgbench_branches (bid INT NOT NULL PRIMARY KEY, " ..
             "bbalance INT NOT NULL, filler CHAR(88)) " .. e)
   con:query("CREATE TABLE pgbench_tellers (tid INT NOT NULL PRIMARY KEY, " ..
             "bid INT NOT NULL, tbalance INT NOT NULL, filler CHAR(84)) " .. e)
   con:query("CREATE TABLE pgbench_accounts (aid INT NOT NULL PRIMARY KEY, " ..
             "bid INT NOT NULL, abalance INT NOT NULL, filler CHAR(84)) " .. e)
   con:query("CREATE TABLE pgbench_history (tid INT, bid INT, aid INT, delta INT, " ..
             "mtime TIMESTAMP NULL, filler CHAR(22)) " .. e)
   print(string.format("Loading pgbench tables, scale %d (%d accounts)", scale(), accounts()))
   load_rows(con, "pgbench_branches", scale(), function(i)
      return string.format("(%d,0,'')", i)
   end)
   load_rows(con, "pgbench_tellers", scale() * TELLERS_PER_BRANCH, function(i)
      return string.format("(%d,%d,0,'')", i, math.floor((i - 1) / TELLERS_PER_BRANCH) + 1)
   end)
   local per = sysbench.opt.table_size
   load_rows(con, "pgbench_accounts", accounts(), function(i)
      return string.format("(%d,%d,0,'')", i, math.floor((i - 1) / per) + 1)
   end)
   con:disconnect()
end

function cleanup()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for _, t in ipairs({"pgbench_history", "pgbench_accounts", "pgbench_tellers",
                       "pgbench_branches"}) do
      con:query("DROP TABLE IF EXISTS " .. t)
   end
   con:disconnect()
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
end

function thread_done()
   con:disconnect()
end

function event()
   local aid = sysbench.rand.uniform(1, accounts())
   local bid = sysbench.rand.uniform(1, scale())
   local tid = sysbench.rand.uniform(1, scale() * TELLERS_PER_BRANCH)
   -- sysbench.rand.uniform takes unsigned bounds: shift a 0..2*DELTA draw
   local delta = sysbench.rand.uniform(0, 2 * DELTA) - DELTA
   con:query("BEGIN")
   con:query(string.format(
      "UPDATE pgbench_accounts SET abalance = abalance + %d WHERE aid = %d", delta, aid))
   con:query(string.format("SELECT abalance FROM pgbench_accounts WHERE aid = %d", aid))
   con:query(string.format(
      "UPDATE pgbench_tellers SET tbalance = tbalance + %d WHERE tid = %d", delta, tid))
   con:query(string.format(
      "UPDATE pgbench_branches SET bbalance = bbalance + %d WHERE bid = %d", delta, bid))
   con:query(string.format(
      "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) " ..
      "VALUES (%d, %d, %d, %d, CURRENT_TIMESTAMP)", tid, bid, aid, delta))
   con:query("COMMIT")
end
