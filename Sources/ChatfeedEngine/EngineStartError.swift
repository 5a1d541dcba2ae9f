import ChatStore
import SQLite

/// The database of an engine could not be opened or loaded: what `ChatEngine.init` throws, in
/// words that name the database and the cause (the daemon prints it as its one line).
public struct EngineStartError: Error, CustomStringConvertible {
    public var database: String
    public var underlying: any Error

    public init(database: String, underlying: any Error) {
        self.database = database
        self.underlying = underlying
    }

    public var description: String {
        // The store's own errors already name the database.
        switch underlying {
        case is ChatStoreError: "\(underlying)"
        case let error as SQLiteError: "cannot open the database '\(database)': \(error.summary)"
        default: "cannot open the database '\(database)': \(underlying)"
        }
    }
}
