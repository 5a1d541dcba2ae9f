import SQLite
import Testing

/// A prepared statement run again binds its new arguments, and NULL for the parameters it is
/// given none for: nothing of an earlier run's arguments stays bound.
@Suite struct StatementBindingTests {
    @Test func eachRunBindsItsOwnArgumentsAndNullForTheRest() throws {
        let db = try Database(path: ":memory:")
        let statement = try db.cachedStatement("SELECT ?1, ?2, ?3")
        func row<each Value: DatabaseValueConvertible>(_ arguments: repeat each Value) throws -> [String?] {
            var values: [String?] = []
            try statement.forEachRow(repeat each arguments) { row in
                values = (0..<3).map { row.isNull(Int32($0)) ? nil : row[Int32($0)] as String }
            }
            return values
        }
        #expect(try row("a", 2, Int64(3)) == ["a", "2", "3"])
        #expect(try row("b", "c", "d") == ["b", "c", "d"])
        #expect(try row("e") == ["e", nil, nil])
        #expect(try row(Optional<String>.none, "f", "g") == [nil, "f", "g"])
        #expect(try row() == [nil, nil, nil])
        #expect(try statement.fetchOne("h", decode: { $0.isNull(1) && $0.isNull(2) }) == true)
        #expect(try statement.fetchValue(String.self, "i", "j") == "i")
        #expect(try statement.fetchAll(decode: { $0.isNull(0) }) == [true])
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
