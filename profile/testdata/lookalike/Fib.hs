main :: IO ()
main = print (sum [fib n | n <- [20 .. 24]])

fib :: Int -> Integer
fib n = if n < 2 then toInteger n else fib (n - 1) + fib (n - 2)
