-- Corrections to the loaded orders (a .sql file: DucklakeOperator renders it as a template).
ATTACH 'ducklake' AS dl; USE dl;
UPDATE sales.orders SET amount = amount * 2 WHERE customer_id = $doubled;
DELETE FROM sales.orders WHERE amount < $minimum;
MERGE INTO sales.orders AS o
  USING (SELECT 1000 AS order_id, 0.0 AS amount UNION ALL SELECT 5000, 99.5) AS fix
  ON o.order_id = fix.order_id
  WHEN MATCHED THEN UPDATE SET amount = fix.amount
  WHEN NOT MATCHED THEN INSERT (order_id, customer_id, amount, order_day)
                        VALUES (fix.order_id, 0, fix.amount, 0);
