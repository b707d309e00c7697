-- wrk script: POST a 1 KiB JSON body (the bench's small request), for the
-- wrk rows of docs/BENCHMARKS.md: wrk -t1 -c1 -d3s -s bench/nginx/post1k.lua URL
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"pad":"' .. string.rep("a", 1014) .. '"}'
