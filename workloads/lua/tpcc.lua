#!/usr/bin/env sysbench
-- TPC-C-like workload for sysbench 1.0, written for perftrack (article 004 runs a TPC-C
-- like load at REPEATABLE READ and READ COMMITTED). Not a TPC-C implementation: no
-- keying/think times, no terminals, simplified rows; the schema, the five transactions
-- and their standard mix follow the TPC-C specification (rev. 5.11, clauses 1.3 and 2):
--   new-order 45%, payment 43%, order-status 4%, delivery 4%, stock-level 4%.
--
-- Mapping to perftrack's cell: --tables = warehouses; --table-size = items (spec:
-- 100000); per district: customers = table_size * 3 / 100 (spec: 3000), one initial
-- order per customer, the last 30% of them still in new_orders (spec: 900 of 3000).
--
-- Lock-wait timeouts (1205) and deadlocks (1213) are expected under load: run with
-- --mysql-ignore-errors=1205,1213 (the workload entry does), so sysbench rolls the
-- transaction back, counts it in "ignored errors" (errors_per_s) and goes on.

sysbench.cmdline.options = {
   tables = {"Warehouses", 1},
   table_size = {"Items (TPC-C: 100000); customers per district = 3% of it", 100000},
   mysql_storage_engine = {"Storage engine of the tables", "innodb"},
}

local DISTRICTS = 10           -- per warehouse (spec 1.2.1)
local MIN_LINES, MAX_LINES = 5, 15  -- order lines per order (spec 2.4.1.3)
local NEW_ORDER_SHARE = 0.3    -- 900 of 3000 initial orders are undelivered (spec 4.3.3.1)
local STOCK_THRESHOLD_MIN, STOCK_THRESHOLD_MAX = 10, 20  -- stock-level (spec 2.8.1.2)
-- the mix, as cumulative percentages (spec 5.2.3 minimums; new-order takes the rest)
local MIX = {{45, "new_order"}, {88, "payment"}, {92, "order_status"}, {96, "delivery"},
             {100, "stock_level"}}

local function warehouses() return sysbench.opt.tables end
local function items() return sysbench.opt.table_size end
local function customers()
   return math.max(10, math.floor(sysbench.opt.table_size * 3 / 100))
end

local function rand(a, b) return sysbench.rand.uniform(a, b) end
-- NURand(A, x, y) of spec 2.1.6, C fixed at 0 per run (the spec allows any C)
local function nurand(a, x, y)
   return ((bit.bor(rand(0, a), rand(x, y))) % (y - x + 1)) + x
end
local function customer_id() return nurand(1023, 1, customers()) end
local function item_id() return nurand(8191, 1, items()) end
local function str(n) return sysbench.rand.string(string.rep("@", n)) end

local function engine_def()
   return " /*! ENGINE = " .. sysbench.opt.mysql_storage_engine .. " */"
end

local SCHEMA = {
   "CREATE TABLE warehouse (w_id INT NOT NULL PRIMARY KEY, w_name VARCHAR(10)," ..
      " w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2))",
   "CREATE TABLE district (d_w_id INT NOT NULL, d_id INT NOT NULL, d_name VARCHAR(10)," ..
      " d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT," ..
      " PRIMARY KEY (d_w_id, d_id))",
   "CREATE TABLE customer (c_w_id INT NOT NULL, c_d_id INT NOT NULL, c_id INT NOT NULL," ..
      " c_first VARCHAR(16), c_last VARCHAR(16), c_credit CHAR(2), c_discount DECIMAL(4,4)," ..
      " c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT," ..
      " c_delivery_cnt INT, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id)," ..
      " KEY c_last (c_w_id, c_d_id, c_last, c_first))",
   "CREATE TABLE history (h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT," ..
      " h_date DATETIME, h_amount DECIMAL(6,2), h_data VARCHAR(24))",
   "CREATE TABLE orders (o_w_id INT NOT NULL, o_d_id INT NOT NULL, o_id INT NOT NULL," ..
      " o_c_id INT, o_entry_d DATETIME, o_carrier_id INT NULL, o_ol_cnt INT," ..
      " o_all_local INT, PRIMARY KEY (o_w_id, o_d_id, o_id)," ..
      " KEY o_cust (o_w_id, o_d_id, o_c_id, o_id))",
   "CREATE TABLE new_orders (no_w_id INT NOT NULL, no_d_id INT NOT NULL," ..
      " no_o_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
   "CREATE TABLE order_line (ol_w_id INT NOT NULL, ol_d_id INT NOT NULL," ..
      " ol_o_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT, ol_supply_w_id INT," ..
      " ol_delivery_d DATETIME NULL, ol_quantity INT, ol_amount DECIMAL(6,2)," ..
      " ol_dist_info CHAR(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
   "CREATE TABLE item (i_id INT NOT NULL PRIMARY KEY, i_im_id INT, i_name VARCHAR(24)," ..
      " i_price DECIMAL(5,2), i_data VARCHAR(50))",
   "CREATE TABLE stock (s_w_id INT NOT NULL, s_i_id INT NOT NULL, s_quantity INT," ..
      " s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_dist CHAR(24), s_data VARCHAR(50)," ..
      " PRIMARY KEY (s_w_id, s_i_id))",
}
local TABLES = {"order_line", "new_orders", "orders", "history", "customer", "district",
                "stock", "item", "warehouse"}

local function bulk(con, table, rows)
   con:bulk_insert_init("INSERT INTO " .. table .. " VALUES")
   rows(function(values) con:bulk_insert_next("(" .. values .. ")") end)
   con:bulk_insert_done()
end

function prepare()
   local con = sysbench.sql.driver():connect()
   for _, ddl in ipairs(SCHEMA) do con:query(ddl .. engine_def()) end
   local nw, ni, nc = warehouses(), items(), customers()
   print(string.format("Loading TPC-C-like tables: %d warehouse(s), %d items, " ..
                       "%d customers per district", nw, ni, nc))
   bulk(con, "item", function(add)
      for i = 1, ni do
         add(string.format("%d,%d,'%s',%.2f,'%s'", i, rand(1, 10000), str(14),
                           rand(100, 10000) / 100, str(26)))
      end
   end)
   for w = 1, nw do
      con:query(string.format("INSERT INTO warehouse VALUES (%d,'%s',%.4f,300000)",
                              w, str(8), rand(0, 2000) / 10000))
      bulk(con, "stock", function(add)
         for i = 1, ni do
            add(string.format("%d,%d,%d,0,0,0,'%s','%s'", w, i, rand(10, 100), str(24),
                              str(26)))
         end
      end)
      for d = 1, DISTRICTS do
         con:query(string.format(
            "INSERT INTO district VALUES (%d,%d,'%s',%.4f,30000,%d)",
            w, d, str(8), rand(0, 2000) / 10000, nc + 1))
         bulk(con, "customer", function(add)
            for c = 1, nc do
               add(string.format("%d,%d,%d,'%s','LAST%d','%s',%.4f,-10,10,1,0,'%s'",
                                 w, d, c, str(10), c % 1000,
                                 rand(1, 10) == 1 and "BC" or "GC",
                                 rand(0, 5000) / 10000, str(50)))
            end
         end)
         local first_new = nc - math.floor(nc * NEW_ORDER_SHARE) + 1
         bulk(con, "orders", function(add)
            for o = 1, nc do
               add(string.format("%d,%d,%d,%d,NOW(),%s,%d,1", w, d, o, rand(1, nc),
                                 o < first_new and tostring(rand(1, 10)) or "NULL",
                                 MIN_LINES + (o % (MAX_LINES - MIN_LINES + 1))))
            end
         end)
         bulk(con, "order_line", function(add)
            for o = 1, nc do
               for l = 1, MIN_LINES + (o % (MAX_LINES - MIN_LINES + 1)) do
                  add(string.format("%d,%d,%d,%d,%d,%d,%s,5,%.2f,'%s'", w, d, o, l,
                                    rand(1, ni), w, o < first_new and "NOW()" or "NULL",
                                    o < first_new and 0 or rand(1, 999999) / 100, str(24)))
               end
            end
         end)
         bulk(con, "new_orders", function(add)
            for o = first_new, nc do add(string.format("%d,%d,%d", w, d, o)) end
         end)
      end
   end
   con:disconnect()
end

function cleanup()
   local con = sysbench.sql.driver():connect()
   for _, t in ipairs(TABLES) do con:query("DROP TABLE IF EXISTS " .. t) end
   con:disconnect()
end

function thread_init()
   con = sysbench.sql.driver():connect()
end

function thread_done()
   con:disconnect()
end

-- A deadlock or lock-wait timeout (ignored via --mysql-ignore-errors) restarts the
-- event: roll back what the failed transaction left, then sysbench counts the error.
sysbench.hooks.before_restart_event = function(err)
   con:query("ROLLBACK")
end

-- Run one statement; for a SELECT, return the first column of its first row (or nil)
-- and free the result set.
local function q(fmt, ...)
   local rs = con:query(string.format(fmt, ...))
   if rs == nil or rs.nfields == 0 then return nil end  -- not a SELECT
   local row = rs.nrows > 0 and rs:fetch_row() or nil
   rs:free()
   return row and row[1]
end

local TX = {}

function TX.new_order(w, d)
   local c, lines = customer_id(), rand(MIN_LINES, MAX_LINES)
   q("SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse" ..
     " WHERE w_id = %d AND c_w_id = w_id AND c_d_id = %d AND c_id = %d", w, d, c)
   local o = tonumber((q("SELECT d_next_o_id FROM district" ..
                              " WHERE d_w_id = %d AND d_id = %d FOR UPDATE", w, d)))
   q("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %d AND d_id = %d", w, d)
   q("INSERT INTO orders VALUES (%d,%d,%d,%d,NOW(),NULL,%d,1)", w, d, o, c, lines)
   q("INSERT INTO new_orders VALUES (%d,%d,%d)", w, d, o)
   for l = 1, lines do
      local i, qty = item_id(), rand(1, 10)
      local price = tonumber((q("SELECT i_price FROM item WHERE i_id = %d", i))) or 1
      q("SELECT s_quantity, s_dist, s_data FROM stock WHERE s_i_id = %d AND s_w_id = %d" ..
        " FOR UPDATE", i, w)
      q("UPDATE stock SET s_quantity = IF(s_quantity >= %d + 10, s_quantity - %d," ..
        " s_quantity - %d + 91), s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1" ..
        " WHERE s_i_id = %d AND s_w_id = %d", qty, qty, qty, qty, i, w)
      q("INSERT INTO order_line VALUES (%d,%d,%d,%d,%d,%d,NULL,%d,%.2f,'%s')",
        w, d, o, l, i, w, qty, qty * price, str(24))
   end
end

function TX.payment(w, d)
   local c, amount = customer_id(), rand(100, 500000) / 100
   q("UPDATE warehouse SET w_ytd = w_ytd + %.2f WHERE w_id = %d", amount, w)
   q("SELECT w_name FROM warehouse WHERE w_id = %d", w)
   q("UPDATE district SET d_ytd = d_ytd + %.2f WHERE d_w_id = %d AND d_id = %d", amount, w, d)
   q("SELECT d_name FROM district WHERE d_w_id = %d AND d_id = %d", w, d)
   if rand(1, 100) <= 60 then  -- 60% by last name (spec 2.5.1.2): the middle one
      local n = tonumber((q("SELECT COUNT(*) FROM customer WHERE c_w_id = %d AND" ..
                                 " c_d_id = %d AND c_last = 'LAST%d'", w, d, c % 1000)))
      if n and n > 0 then
         c = tonumber((q("SELECT c_id FROM customer WHERE c_w_id = %d AND c_d_id = %d" ..
                              " AND c_last = 'LAST%d' ORDER BY c_first LIMIT %d, 1",
                              w, d, c % 1000, math.floor((n - 1) / 2)))) or c
      end
   end
   q("SELECT c_balance, c_credit FROM customer WHERE c_w_id = %d AND c_d_id = %d" ..
     " AND c_id = %d FOR UPDATE", w, d, c)
   q("UPDATE customer SET c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment" ..
     " + %.2f, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d" ..
     " AND c_id = %d", amount, amount, w, d, c)
   q("INSERT INTO history VALUES (%d,%d,%d,%d,%d,NOW(),%.2f,'%s')", c, d, w, d, w, amount,
     str(20))
end

function TX.order_status(w, d)
   local c = customer_id()
   q("SELECT c_balance, c_first, c_last FROM customer WHERE c_w_id = %d AND c_d_id = %d" ..
     " AND c_id = %d", w, d, c)
   local o = (q("SELECT MAX(o_id) FROM orders WHERE o_w_id = %d AND o_d_id = %d" ..
                     " AND o_c_id = %d", w, d, c))
   if o then
      q("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d" ..
        " FROM order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", w, d, o)
   end
end

function TX.delivery(w)
   local carrier = rand(1, 10)
   for d = 1, DISTRICTS do
      local o = (q("SELECT MIN(no_o_id) FROM new_orders WHERE no_w_id = %d" ..
                        " AND no_d_id = %d FOR UPDATE", w, d))
      if o then
         q("DELETE FROM new_orders WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %s",
           w, d, o)
         local c = (q("SELECT o_c_id FROM orders WHERE o_w_id = %d AND o_d_id = %d" ..
                           " AND o_id = %s", w, d, o))
         q("UPDATE orders SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d" ..
           " AND o_id = %s", carrier, w, d, o)
         q("UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = %d AND" ..
           " ol_d_id = %d AND ol_o_id = %s", w, d, o)
         local total = (q("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = %d" ..
                               " AND ol_d_id = %d AND ol_o_id = %s", w, d, o)) or 0
         if c then
            q("UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt =" ..
              " c_delivery_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d AND c_id = %s",
              total, w, d, c)
         end
      end
   end
end

function TX.stock_level(w, d)
   local next_o = tonumber((q("SELECT d_next_o_id FROM district WHERE d_w_id = %d" ..
                                   " AND d_id = %d", w, d)))
   q("SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = %d" ..
     " AND ol_d_id = %d AND ol_o_id >= %d AND ol_o_id < %d AND s_w_id = %d" ..
     " AND s_i_id = ol_i_id AND s_quantity < %d", w, d, next_o - 20, next_o, w,
     rand(STOCK_THRESHOLD_MIN, STOCK_THRESHOLD_MAX))
end

function event()
   local w, d, pick = rand(1, warehouses()), rand(1, DISTRICTS), rand(1, 100)
   local name
   for _, m in ipairs(MIX) do
      if pick <= m[1] then name = m[2]; break end
   end
   con:query("BEGIN")
   TX[name](w, d)
   con:query("COMMIT")
end
