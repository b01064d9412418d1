-- Reserved for a migration of another branch of this round (issue 36's knowledge tables are 011): DELETE this file
-- when merging; two files with one number fail loudly at start.
SELECT 1;
