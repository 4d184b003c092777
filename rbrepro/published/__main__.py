from rbrepro.published import main

main()
