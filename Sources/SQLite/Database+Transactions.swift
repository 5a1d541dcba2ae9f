import CSQLite

extension Database {
    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes a read snapshot at the first read (for queries).
        case deferred = "DEFERRED"
        /// Takes the write lock at once, waiting up to the busy timeout (for writes).
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    public func inTransaction<T>(_ kind: TransactionKind, _ body: () throws -> T) throws -> T {
        switch kind {
        case .deferred: try cachedStatement("BEGIN DEFERRED TRANSACTION").execute()
        case .immediate: try cachedStatement("BEGIN IMMEDIATE TRANSACTION").execute()
        }
        let value: T
        do {
            value = try body()
        } catch {
            rollbackIfNeeded()
            throw error
        }
        do {
            try cachedStatement("COMMIT TRANSACTION").execute()
        } catch {
            rollbackIfNeeded()
            throw error
        }
        return value
    }

    /// Runs `body` in a savepoint nested in the current transaction: releases it when `body`
    /// returns, rolls back to it (undoing only `body`'s writes) when it throws.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try cachedStatement("SAVEPOINT chatfeed_event").execute()
        do {
            let value = try body()
            try cachedStatement("RELEASE SAVEPOINT chatfeed_event").execute()
            return value
        } catch {
            if !isAutocommit {
                try? cachedStatement("ROLLBACK TRANSACTION TO SAVEPOINT chatfeed_event").execute()
                try? cachedStatement("RELEASE SAVEPOINT chatfeed_event").execute()
            }
            throw error
        }
    }

    private func rollbackIfNeeded() {
        if !isAutocommit { try? cachedStatement("ROLLBACK TRANSACTION").execute() }
    }
}
