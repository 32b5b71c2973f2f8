// The Postgres JDBC driver against kyma: java -cp postgresql.jar KymaJdbc.java <port> <token>
// prints what a schema browser and a prepared query see, one fact a line. With a third
// argument, a long query, it runs that under a 1 s query timeout instead (the driver sends
// a cancel request) and prints the error's SQLSTATE and the next query's answer.
// java -cp postgresql.jar KymaJdbc.java meta <jdbc url> <user> <password> prints every row of
// the DatabaseMetaData calls DBeaver's navigator makes for table events and view recent.
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class KymaJdbc {
    public static void main(String[] args) throws SQLException {
        if (args[0].equals("meta")) {
            meta(args[1], args[2], args[3]);
            return;
        }
        Properties props = new Properties();
        props.setProperty("user", "kyma");
        props.setProperty("password", args[1]);
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/kyma";
        try (Connection c = DriverManager.getConnection(url, props)) {
            if (args.length > 2) {
                cancel(c, args[2]);
                return;
            }
            DatabaseMetaData meta = c.getMetaData();
            try (ResultSet rs = meta.getTables(null, "public", "%", new String[] {"TABLE"})) {
                while (rs.next()) System.out.println("table " + rs.getString("TABLE_NAME"));
            }
            try (ResultSet rs = meta.getColumns(null, "public", "events", "%")) {
                while (rs.next()) {
                    System.out.println("column " + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME"));
                }
            }
            String sql = "SELECT n, msg, ts, attrs FROM events WHERE n >= ? ORDER BY n";
            for (int run = 0; run < 6; run++) { // past prepareThreshold (5): server-prepared
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    ps.setLong(1, 2);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next() && run == 5) {
                            System.out.println("row " + rs.getLong(1) + "|" + rs.getString(2) + "|"
                                + rs.getTimestamp(3).toInstant() + "|" + rs.getString(4));
                        }
                    }
                }
            }
            try {
                c.createStatement().executeQuery("SELECT * FROM no_such_table");
            } catch (SQLException e) {
                System.out.println("error " + e.getSQLState());
            }
        } catch (SQLException e) {
            System.out.println("connect " + e.getSQLState() + " " + e.getMessage());
        }
    }

    static void meta(String url, String user, String password) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, password)) {
            DatabaseMetaData m = c.getMetaData();
            print("schemas", m.getSchemas());
            print("tables", m.getTables(null, "public", "%", new String[] {"TABLE", "VIEW"}));
            for (String table : new String[] {"events", "recent"}) {
                print("primary keys", m.getPrimaryKeys(null, "public", table));
                print("imported keys", m.getImportedKeys(null, "public", table));
                print("exported keys", m.getExportedKeys(null, "public", table));
                print("indexes", m.getIndexInfo(null, "public", table, false, true));
                print("columns", m.getColumns(null, "public", table, "%"));
            }
        }
    }

    static void print(String call, ResultSet rs) throws SQLException {
        try (rs) {
            int columns = rs.getMetaData().getColumnCount();
            StringBuilder names = new StringBuilder(call + ":");
            for (int i = 1; i <= columns; i++) names.append(" ").append(rs.getMetaData().getColumnName(i));
            System.out.println(names);
            while (rs.next()) {
                StringBuilder row = new StringBuilder(" ");
                for (int i = 1; i <= columns; i++) row.append("|").append(rs.getString(i));
                System.out.println(row);
            }
        }
    }

    static void cancel(Connection c, String longQuery) throws SQLException {
        long started = System.nanoTime();
        try (Statement st = c.createStatement()) {
            st.setQueryTimeout(1);
            st.executeQuery(longQuery);
            System.out.println("finished");
        } catch (SQLException e) {
            System.out.println("cancelled " + e.getSQLState() + " after "
                + (System.nanoTime() - started) / 1_000_000_000 + " s");
        }
        try (ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM events")) {
            rs.next();
            System.out.println("after " + rs.getLong(1));
        }
    }
}
