// The Postgres JDBC driver against kyma: java -cp postgresql.jar KymaJdbc.java <port> <token>
// prints what a schema browser and a prepared query see, one fact a line. With a third
// argument, a long query, it runs that under a 1 s query timeout instead (the driver sends
// a cancel request) and prints the error's SQLSTATE and the next query's answer.
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class KymaJdbc {
    public static void main(String[] args) {
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
