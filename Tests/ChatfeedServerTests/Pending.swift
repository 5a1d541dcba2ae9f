// End-to-end tests of chatfeedd arrive from the e2e branch.
