import SQLite
import Testing

/// A prepared statement run again binds its new arguments, and NULL for the parameters it is
/// given none for: nothing of an earlier run's arguments stays bound.
@Suite struct StatementBindingTests {
    @Test func eachRunBindsItsOwnArgumentsAndNullForTheRest() throws {
        let db = try Database(path: ":memory:")
        let statement = try db.cachedStatement("SELECT ?1, ?2, ?3")
        func row(_ arguments: [any DatabaseValueConvertible]) throws -> [String?] {
            var values: [String?] = []
            try statement.forEachRow(arguments) { row in
                values = (0..<3).map { row.isNull(Int32($0)) ? nil : row[Int32($0)] as String }
            }
            return values
        }
        #expect(try row(["a", 2, Int64(3)]) == ["a", "2", "3"])
        #expect(try row(["b", "c", "d"]) == ["b", "c", "d"])
        #expect(try row(["e"]) == ["e", nil, nil])
        #expect(try row([Optional<String>.none, "f", "g"]) == [nil, "f", "g"])
        #expect(try row([]) == [nil, nil, nil])
    }

    @Test func aStatementRunByExecuteBindsAsAForEachRowDoes() throws {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t (a, b)")
        let insert = try db.cachedStatement("INSERT INTO t (a, b) VALUES (?1, ?2)")
        try insert.execute("x", "y")
        try insert.execute("z")
        let rows = try db.cachedStatement("SELECT a, b FROM t ORDER BY rowid").fetchAll { row in
            [row.isNull(0) ? nil : row[0] as String, row.isNull(1) ? nil : row[1] as String]
        }
        #expect(rows == [["x", "y"], ["z", nil]])
    }
}
