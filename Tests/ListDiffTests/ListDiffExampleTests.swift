import ListDiff
import Testing
import TestSupport

@Suite("The seeds' examples")
struct ListDiffExampleTests {
    @Test("[0…6] → [1,2,4,5,6,10,11]: deletes [3,0], inserts at 5 and 6")
    func seedWorkedExample() throws {
        let old = [TestItem](ids: [0, 1, 2, 3, 4, 5, 6])
        let new = [TestItem](ids: [1, 2, 4, 5, 6, 10, 11])
        let result = try ListDiff.diff(from: old, to: new)
        let batch = try #require(result.structural)
        #expect(batch.deletes == [3, 0])
        #expect(batch.inserts.map(\.index) == [5, 6])
        #expect(batch.inserts.map(\.item.id) == [10, 11])
        #expect(batch.moves.isEmpty)
        #expect(result.updates == nil)
        #expect(ReferenceDiff.problem(with: result, old: old, new: new) == nil)
    }

    @Test("[1,2,3,4] → [4,1,2,3] is one move of 4 up")
    func oneMoveUp() throws {
        let result = try ListDiff.diff(from: [TestItem](ids: [1, 2, 3, 4]), to: [TestItem](ids: [4, 1, 2, 3]))
        #expect(result.structural == Batch(moves: [Move(from: 3, to: 0)]))
        #expect(result.updates == nil)
    }

    @Test("blind [x,a,b,y] → [a,b,x,y] moves a and b up")
    func blindMovesUp() throws {
        // x = 0, a = 1, b = 2, y = 3
        let result = try ListDiff.diff(from: [TestItem](ids: [0, 1, 2, 3]), to: [TestItem](ids: [1, 2, 0, 3]))
        let moves = try #require(result.structural?.moves)
        #expect(Set(moves) == [Move(from: 1, to: 0), Move(from: 2, to: 1)])
    }

    @Test("with x's order key changed, [x,a,b,y] → [a,b,x,y] is one move of x down")
    func changedKeyMovesDown() throws {
        let result = try ListDiff.diff(
            from: [TestItem](ids: [0, 1, 2, 3]), to: [TestItem](ids: [1, 2, 0, 3]), orderKeyChanged: [0])
        #expect(result.structural == Batch(moves: [Move(from: 0, to: 2)]))
    }

    @Test("a moved row that changed is updated in the deferred batch, at its new index")
    func movedAndChanged() throws {
        let old = [TestItem](ids: [1, 2, 3, 4])
        let new = [TestItem(id: 4, revision: 1), TestItem(id: 1), TestItem(id: 2, revision: 1), TestItem(id: 3)]
        let result = try ListDiff.diff(from: old, to: new)
        #expect(result.structural == Batch(moves: [Move(from: 3, to: 0)]))
        #expect(result.updates?.updates.map(\.index) == [0, 2])
        #expect(ReferenceDiff.problem(with: result, old: old, new: new) == nil)
    }

    @Test("only revision changes give a single pure-update batch")
    func onlyUpdates() throws {
        let old = [TestItem](ids: [1, 2, 3])
        let new = [TestItem(id: 1), TestItem(id: 2, revision: 5), TestItem(id: 3)]
        let result = try ListDiff.diff(from: old, to: new)
        #expect(result.structural == nil)
        #expect(result.batches.count == 1)
        #expect(result.updates?.updates == [IndexedItem(index: 1, item: TestItem(id: 2, revision: 5))])
    }

    @Test("equal lists give no batch")
    func noChange() throws {
        #expect(try ListDiff.diff(from: [TestItem](ids: [1, 2]), to: [TestItem](ids: [1, 2])).batches.isEmpty)
        #expect(try ListDiff.diff(from: [TestItem](), to: []).batches.isEmpty)
    }

    @Test("duplicate ids are an error that names the id and the list", arguments: [
        ([1, 2, 1], [1], ListSide.old),
        ([1], [2, 3, 3], ListSide.new),
        ([1, 2], [2, 1, 2], ListSide.new),
    ])
    func duplicates(old: [Int], new: [Int], side: ListSide) {
        #expect {
            _ = try ListDiff.diff(from: [TestItem](ids: old), to: [TestItem](ids: new))
        } throws: { error in
            guard case .duplicateID(let id, let inList) = error as? ListDiffError else { return false }
            return inList == side && ["1", "2", "3"].contains(id) && "\(error)".contains("\(side.rawValue) list")
        }
    }

    @Test("a changed-key set that contradicts the lists is an error naming both items")
    func inconsistentChangedKeys() {
        #expect(throws: ListDiffError.unchangedKeysReordered("1", "2")) {
            _ = try ListDiff.diff(
                from: [TestItem](ids: [1, 2, 3]), to: [TestItem](ids: [2, 1, 3]), orderKeyChanged: [3])
        }
    }
}

@Suite("Choosing the rows that stay")
struct UpwardPreferredStaysTests {
    @Test("with explicit flags, one item that did not go up outweighs any number that did")
    func explicitFlags() {
        // Positions in old order: a (down) at new 2, x1 (up) at new 0, x2 (up) at new 1.
        #expect(UpwardPreferredStays.select(newPositions: [20, 0, 10], wentUp: [false, true, true]) == [true, false, false])
        #expect(UpwardPreferredStays.select(newPositions: [20, 0, 10], wentUp: [false, false, false]) == [false, true, true])
        #expect(UpwardPreferredStays.select(newPositions: [], wentUp: []) == [])
    }
}
