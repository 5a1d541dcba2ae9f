import Testing
import TestSupport

@testable import SQLite

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

    /// Text is bound from the statement's own buffer, which grows when a binding needs more: each
    /// run reads exactly its own strings, whatever the runs before bound ("" as TEXT, not NULL).
    @Test func textIsReadFromTheStatementsBufferRunAfterRun() throws {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t (a, b, c)")
        let insert = try db.cachedStatement("INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)")
        var random = SeededGenerator(seed: 18)
        var expected: [[String?]] = []
        for run in 0..<200 {
            let lengths = (0..<3).map { _ in [0, 1, 15, 16, 63, 64, 65, 300, 5_000].randomElement(using: &random)! }
            let texts = lengths.enumerated().map { column, length in
                String(repeating: Character(UnicodeScalar(UInt8(97 + (run + column) % 26))), count: length)
            }
            let third: String? = run % 7 == 0 ? nil : texts[2]
            if run % 5 == 0 {
                try insert.execute(texts[0], Int64(run))  // (the third parameter NULL)
                expected.append([texts[0], "\(run)", nil])
            } else {
                try insert.execute(texts[0], texts[1], third)
                expected.append([texts[0], texts[1], third])
            }
        }
        let rows = try db.cachedStatement("SELECT a, b, c FROM t ORDER BY rowid").fetchAll { row in
            (0..<3).map { row.isNull(Int32($0)) ? nil : row[Int32($0)] as String }
        }
        #expect(rows == expected)
        #expect(try db.cachedStatement("SELECT typeof(?1)").fetchValue(String.self, "") == "text")
    }

    /// One long text does not stay with the statement: the next binding of short ones makes its
    /// buffer small again, and reads them right.
    @Test func aLongTextsBufferIsGivenBack() throws {
        let db = try Database(path: ":memory:")
        let select = try db.cachedStatement("SELECT ?1, length(?2)")
        let long = String(repeating: "x", count: 1_000_000)
        #expect(try select.fetchOne("a", long, decode: { [$0[0] as String, $0[1] as String] }) == ["a", "1000000"])
        #expect(select.boundText.count >= 1_000_001)
        #expect(try select.fetchOne("b", "cd", decode: { [$0[0] as String, $0[1] as String] }) == ["b", "2"])
        #expect(select.boundText.count <= 65_536)
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
